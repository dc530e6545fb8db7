/* Call sites and line ranges in bodies without braces, else-if chains,
 * loops and after labels; a goto into a range is refused. */
#include <stdio.h>

static int step(int i) { return i * 2; }

int walk(int n) {
  int total = 0;
  for (int i = 0; i < n; i++)
    total += step(i);
  while (total > 100) total -= step(3);
  if (n > 10)
    printf("many\n");
  else if (n > 5) {
    printf("some\n");
  } else
    printf("few\n");
  do
    total++;
  while (total < 3);
retry:
  total += step(1);
  if (total < 20)
    goto retry;
  switch (n) {
  case 1:
    total += step(n);
    break;
  default:
    printf("n=%d\n", n);
  }
  return total;
}

int jump(int n) {
  if (n < 0)
    goto done;
  n = step(n);
  n++;
done:
  n--;
  return n;
}
