// Lets `#include <sycl/sycl.hpp>` resolve to the hostemu SYCL skin.
#pragma once
#include "../hostemu/sycl.h"
