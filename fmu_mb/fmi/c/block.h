/* A signal block's share of the model.h contract (block.c): everything but model_create, model_free and
 * model_evaluate, and the channel table its model_create builds. */
#ifndef FMU_MB_BLOCK_H
#define FMU_MB_BLOCK_H
#include "model.h"

/* vr[k][channel] = the value reference of role slot k (slot_of(role), 0 ... n_roles - 1) of each channel, for as
 * many channels as variables of `output_role` (*channels); 0 (logged, nothing allocated) when memory is out. */
int block_channels(Instance *s, int (*slot_of)(int role), int n_roles, int output_role, int *channels, int **vr);
#endif
