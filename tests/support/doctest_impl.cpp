// doctest's implementation, compiled once into accel-doctest for every test
// program (each defines its own main(), or links support/doctest_main.cpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
