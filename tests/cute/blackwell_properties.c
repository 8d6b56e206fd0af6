/* Preloaded into a CuTe SM100 tutorial's host when it runs on Hopper through the emulation
 * (tests/cute/tutorials_run.py). The tutorials refuse to start unless the device reports compute
 * capability 10.0, and they launch what their fatbin holds, which the test made the sm_90 cubin
 * of their own lowered module. So cudaGetDeviceProperties answers 10.0; every other field is the
 * device's own. Built by nvcc (for the runtime's header), linked to libdl. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stddef.h>

typedef cudaError_t (*properties_fn)(struct cudaDeviceProp* properties, int device);

static cudaError_t as_blackwell(const char* name, struct cudaDeviceProp* properties, int device) {
  properties_fn real = (properties_fn)dlsym(RTLD_NEXT, name);
  if (real == NULL) return cudaErrorInitializationError; /* no runtime to ask */
  const cudaError_t status = real(properties, device);
  if (status == cudaSuccess) {
    properties->major = 10;
    properties->minor = 0;
  }
  return status;
}

/* The runtime API's header maps cudaGetDeviceProperties to the _v2 entry point (CUDA 12). */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp* properties, int device) {
  return as_blackwell("cudaGetDeviceProperties_v2", properties, device);
}
