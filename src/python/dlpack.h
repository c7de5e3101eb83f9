/* dlpack.h — the DLPack structs nbcuda exchanges through __dlpack__ capsules, written from the
 * DLPack specification (dlpack.h of dmlc/dlpack, versions 0.8 and 1.x) so that the extension
 * needs no DLPack header. Only the layout matters: a capsule named "dltensor" holds a
 * DLManagedTensor, one named "dltensor_versioned" a DLManagedTensorVersioned; the consumer
 * renames the capsule it takes to "used_dltensor" / "used_dltensor_versioned" and calls the
 * tensor's deleter when it no longer needs the memory. devicearray_dlpack.c uses it.
 */
#ifndef NBCUDA_DLPACK_H
#define NBCUDA_DLPACK_H

#include <stdint.h>

/* The version of the versioned structs this header describes. */
#define NBC_DLPACK_MAJOR 1
#define NBC_DLPACK_MINOR 0

/* DLDeviceType values nbcuda reads or writes. */
enum {
  NBC_DL_CPU = 1,
  NBC_DL_CUDA = 2,
  NBC_DL_CUDA_HOST = 3, /* page-locked host memory the device can read */
  NBC_DL_CUDA_MANAGED = 13
};

/* DLDataTypeCode values. */
enum {
  NBC_DL_INT = 0,
  NBC_DL_UINT = 1,
  NBC_DL_FLOAT = 2,
  NBC_DL_BFLOAT = 4,
  NBC_DL_COMPLEX = 5,
  NBC_DL_BOOL = 6
};

/* DLManagedTensorVersioned.flags bits. */
#define NBC_DL_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define NBC_DL_FLAG_IS_COPIED (UINT64_C(1) << 1)

typedef struct {
  int32_t device_type;
  int32_t device_id;
} nbc_dl_device;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} nbc_dl_dtype;

typedef struct {
  void *data;
  nbc_dl_device device;
  int32_t ndim;
  nbc_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: compact, C order */
  uint64_t byte_offset;
} nbc_dl_tensor;

typedef struct nbc_dl_managed {
  nbc_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct nbc_dl_managed *self);
} nbc_dl_managed;

typedef struct {
  uint32_t major;
  uint32_t minor;
} nbc_dl_version;

typedef struct nbc_dl_managed_versioned {
  nbc_dl_version version;
  void *manager_ctx;
  void (*deleter)(struct nbc_dl_managed_versioned *self);
  uint64_t flags;
  nbc_dl_tensor dl_tensor;
} nbc_dl_managed_versioned;

#endif /* NBCUDA_DLPACK_H */
