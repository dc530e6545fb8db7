#include "gnu_prefix.h"

#include <string.h>

char *base(char *path) { return basename(path); }
