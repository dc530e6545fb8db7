/* Ranges of every NVTX kind the collector handles, with known counts:
 * scope macros (registered strings, domain "ncrt"), plain push/pop,
 * marks, start/end ranges, categories and thread names. */
#include <ncrt.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static int leaf(int x) {
  NCRT_RANGE("leaf");
  return x * 2;
}

int main(void) {
  NCRT_RANGE("main");
  ncrt_source_location("leaf", "basic.c", 9);
  nvtxNameCategoryA(7, "seven");
  nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main-thread");
  int s = 0;
  for (int i = 0; i < 5; i++) {
    NCRT_RANGE("loop.body");
    s += leaf(i);
  }
  nvtxRangePushA("plain");
  nvtxMarkA("here");
  nvtxRangePop();
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 7;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "with-category";
  nvtxRangePushEx(&a);
  nvtxRangePop();
  nvtxRangePushW(L"wide");
  nvtxRangePop();
  nvtxRangeId_t id = nvtxRangeStartA("span");
  nvtxRangeEnd(id);
  printf("sum %d\n", s);
  return 3;
}
