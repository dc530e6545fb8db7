#ifndef FEATURES_CUH
#define FEATURES_CUH
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#define _FILE_OFFSET_BITS 64
#endif
