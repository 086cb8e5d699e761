// Boost.Asio's non-template code, compiled once for every file that includes
// net/asio.hpp (which asks for separate compilation).
#include "net/asio.hpp"

#include <boost/asio/impl/src.hpp>
