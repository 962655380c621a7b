/*
 * The parent's state, one per daemon: configuration, children, the
 * attempts and the rest (factoryd.h).  Its own file, below every other,
 * so each part of the parent reads it without calling upward.
 */
#include "factoryd.h"

struct factoryd		*env;
