// SPDX-License-Identifier: MIT
// The module's portable core (module/pmu/arch_pmu.c, module/pmu/model_regs.c),
// compiled as C into the unit tests.
#pragma once

extern "C" {
#include "../../module/pmu/arch_pmu.h"
#include "../../module/pmu/model_regs.h"
}
