# Writes the file IN as a C++ raw string literal to OUT (included by tools/report_html.cpp).
# Usage: cmake -DIN=page.html -DOUT=page.inc -P embed_text.cmake
file(READ "${IN}" content)
string(FIND "${content}" ")kcpage\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter )kcpage\"")
endif()
file(WRITE "${OUT}" "R\"kcpage(" "${content}" ")kcpage\"\n")
