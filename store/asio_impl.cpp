// Boost.Asio's non-template code, compiled once for every file that includes
// store/asio.hpp (which asks for separate compilation).
#include "store/asio.hpp"

#include <boost/asio/impl/src.hpp>
