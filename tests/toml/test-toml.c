#include "tests/unit/tap.h"
TEST(x) { EXPECT_EQ(1,1); }
int main(void) { return tap_run(); }
