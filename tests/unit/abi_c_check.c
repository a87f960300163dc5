// SPDX-License-Identifier: MIT
/* The ABI header must compile alone as C (and test_abi.cpp includes it as C++). */
#include "archpmu.h"
#include "archpmu_test.h"

_Static_assert(sizeof(struct archpmu_info) == 80, "archpmu_info layout");
_Static_assert(sizeof(struct archpmu_cpu_info) == 128, "archpmu_cpu_info layout");
_Static_assert(sizeof(struct archpmu_model_msr) == 24, "archpmu_model_msr layout");

unsigned int archpmu_abi_c_sizes(void)
{
	return sizeof(struct archpmu_info) + sizeof(struct archpmu_cpu_info) +
	       sizeof(struct archpmu_model_msr);
}
