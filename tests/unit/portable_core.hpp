// SPDX-License-Identifier: MIT
// The module's portable core (module/arch_pmu.c, module/model_regs.c),
// compiled as C into the unit tests.
#pragma once

extern "C" {
#include "../../module/arch_pmu.h"
#include "../../module/model_regs.h"
}
