# `ringlab lesson NAME --article`: the articles' pages beside the lessons' runs.
ringlab_test(test_article test_article.cpp LIBS ringlab_lessons)
target_compile_definitions(test_article PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_article ringlab)
