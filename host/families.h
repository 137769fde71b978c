/* Every C family the trusted parent state can require. */
#ifndef UH_FAMILIES_H
#define UH_FAMILIES_H
#include "host.h"

extern const struct uh_family uh_families[];

#endif
