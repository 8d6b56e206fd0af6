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

#if defined(cudaGetDeviceProperties)
/* CUDA 12: the runtime API's header maps cudaGetDeviceProperties to the _v2 entry point. */
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp* properties, int device) {
  return as_blackwell("cudaGetDeviceProperties_v2", properties, device);
}
#else
/* CUDA 13: the plain entry point again (libcudart.so.13 has no _v2); measured on an H100, the
 * shim with only the _v2 name let the tutorial see 9.0. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* properties, int device) {
  return as_blackwell("cudaGetDeviceProperties", properties, device);
}
#endif
