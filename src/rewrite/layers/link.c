/* link: the smallest program, linked with one part of the rewriter whole
 * (every object of it, -Wl,--whole-archive) and only the parts below it.
 * That it links is the check: an object that called a part above its own
 * (the core calling the driver, the rules calling the core) leaves an
 * undefined symbol and the build stops there. See ../CMakeLists.txt. */
int main(void) { return 0; }
