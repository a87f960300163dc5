/* SPDX-License-Identifier: GPL-2.0 */
/*
 * archpmu's one version: the module's MODULE_VERSION (modinfo), the library,
 * `archpmu --version`, the man pages and dkms.conf all take it from here.
 */
#ifndef ARCHPMU_VERSION_H
#define ARCHPMU_VERSION_H

#define ARCHPMU_VERSION "0.1.0"

#endif /* ARCHPMU_VERSION_H */
