/*
** bw_schema.h - compiled schema programs (placeholder, replaced next)
** See LICENSE for copyright and terms.
*/
#ifndef BW_SCHEMA_H
#define BW_SCHEMA_H
#include "bw.h"
#endif
