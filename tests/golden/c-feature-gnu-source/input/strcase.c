#define _GNU_SOURCE
/* _GNU_SOURCE must come before the first system header (feature_test_macros(7)):
 * ncrt.h, which reads stdint.h and string.h, goes after it, or strcasestr()
 * would be an implicit int function here and its pointer cut to 32 bits. */
#include <stdio.h>
#include <string.h>

static const char *find(const char *hay, const char *needle) {
  return strcasestr(hay, needle);
}

int main(void) {
  const char *p = find("Hello World", "WORLD");
  printf("%s\n", p ? p : "(null)");
  return p ? 0 : 1;
}
