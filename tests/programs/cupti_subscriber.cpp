// A program that subscribes to CUPTI itself (as torch.profiler does) and prints the results: run with
// and without libkcount.so preloaded, it must print the same (kcount's cuptiSubscribe forwards).
#include <cupti.h>
#include <cstdio>
void CUPTIAPI cb(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}
int main() {
  CUpti_SubscriberHandle h = nullptr;
  CUptiResult r = cuptiSubscribe(&h, &cb, nullptr);
  CUptiResult u = h ? cuptiUnsubscribe(h) : CUPTI_ERROR_INVALID_PARAMETER;
  std::printf("subscribe %d unsubscribe %d\n", (int)r, (int)u);
}
