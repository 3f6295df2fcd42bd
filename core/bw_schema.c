/*
** bw_schema.c - compiled schema programs (placeholder, replaced next)
** See LICENSE for copyright and terms.
*/
#include "bw_schema.h"
