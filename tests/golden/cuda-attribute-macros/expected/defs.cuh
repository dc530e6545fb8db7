#pragma once
#ifdef __CUDACC__
#  define HD __host__ __device__
#  define HOST_ONLY __host__
#else
#  define HD
#  define HOST_ONLY
#endif
#define API extern "C"
