// Vulkan backend: the vendor path. There is none yet: no BLAS for Vulkan is
// packaged for Debian (VkFFT and the like are not BLAS; vendor GEMMs such as
// cooperative-matrix kernels are per-driver), so only the native kernels run
// and the vendor path of matmul/dense/gemm is reported unsupported.
#include "vulkan_device.hpp"

namespace accel {
namespace vulkan {

std::string vendor_blas_description() {
    return "none (the Vulkan backend has no vendor library; native kernels only)";
}

}  // namespace vulkan
}  // namespace accel
