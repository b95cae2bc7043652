// Tests may drive a detector through the whole run: exempt from the rule.
#include "harness/scenario/loader.hpp"
