# cmake -DIN=file -DOUT=file.cpp -DSYMBOL=name -P EmbedText.cmake
# Writes the bytes of IN as a C array (no raw-string length limits).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\nextern const char ${SYMBOL}[];\nconst char ${SYMBOL}[] = {${body} 0};\n")
