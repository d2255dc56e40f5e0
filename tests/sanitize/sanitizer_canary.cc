// One deliberate bug per argument, built with the same flags as everything else in build-san/.
// hack/sanitize.sh runs each and requires the sanitizer's report and a failing exit, so a build
// that lost its instrumentation, or ASAN_OPTIONS / UBSAN_OPTIONS that let a finding pass, stop
// the run instead of letting the tests pass unsanitized.
//   phalanx_sanitizer_canary none                  # exits 0: the canary itself runs
//   phalanx_sanitizer_canary heap-buffer-overflow  # must die with ASan's report
#include <climits>
#include <cstdio>
#include <cstring>

namespace {

char* volatile leaked = nullptr;

int HeapBufferOverflow() {
  char* p = new char[8];
  volatile int i = 8;
  p[i] = 1;
  int r = p[0];
  delete[] p;
  return r;
}

int HeapUseAfterFree() {
  int* p = new int(1);
  delete p;
  volatile int* q = p;
  return *q;
}

int SignedOverflow() {
  volatile int x = INT_MAX;
  int y = x + 1;
  return y == 0 ? 1 : 0;
}

int Leak() {
  leaked = new char[64];
  leaked = nullptr;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc == 2 ? argv[1] : "";
  if (std::strcmp(what, "none") == 0) return 0;
  if (std::strcmp(what, "heap-buffer-overflow") == 0) return HeapBufferOverflow();
  if (std::strcmp(what, "heap-use-after-free") == 0) return HeapUseAfterFree();
  if (std::strcmp(what, "signed-overflow") == 0) return SignedOverflow();
  if (std::strcmp(what, "leak") == 0) return Leak();
  std::fprintf(stderr,
               "usage: phalanx_sanitizer_canary "
               "none|heap-buffer-overflow|heap-use-after-free|signed-overflow|leak\n");
  return 2;
}
