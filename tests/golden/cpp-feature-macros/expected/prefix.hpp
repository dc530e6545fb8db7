#pragma once
// The project's prefix header: defines what the system headers must see.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#define _FILE_OFFSET_BITS 64
