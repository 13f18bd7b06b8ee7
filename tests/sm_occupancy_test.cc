// SM occupancy (support/sm_occupancy.h): the blocks an SM holds by threads, registers
// and shared memory, and the register budget for a number of blocks -- the arithmetic
// the binding policy, the row stage and the register fit share.
#include <gtest/gtest.h>

#include "support/sm_occupancy.h"

namespace polyred {
namespace {

TEST(SmOccupancy, ResidentBlocksByThreads) {
  EXPECT_EQ(residentBlocksByThreads(256), 8);
  EXPECT_EQ(residentBlocksByThreads(1024), 2);
  EXPECT_EQ(residentBlocksByThreads(32), 32);   // at most 32 blocks, not 64
  EXPECT_EQ(residentBlocksByThreads(48), 32);   // two warps a block
  EXPECT_EQ(residentBlocksByThreads(96), 21);
  EXPECT_EQ(residentBlocksByThreads(0), 0);
}

TEST(SmOccupancy, ResidentBlocksByRegisters) {
  EXPECT_EQ(residentBlocksByRegisters(32, 256), 8);  // 64K registers: 8 x 256 x 32
  EXPECT_EQ(residentBlocksByRegisters(34, 256), 6);  // 34 x 32 = 1088 -> 1280 a warp
  EXPECT_EQ(residentBlocksByRegisters(48, 256), 5);
  EXPECT_EQ(residentBlocksByRegisters(21, 256), 8);  // the threads bound it first
  EXPECT_EQ(residentBlocksByRegisters(16, 32), 32);  // at most 32 blocks
  EXPECT_EQ(residentBlocksByRegisters(64, 1024), 1);
  EXPECT_EQ(residentBlocksByRegisters(255, 1024), 0);  // does not fit
  EXPECT_EQ(residentBlocksByRegisters(0, 256), 0);
}

TEST(SmOccupancy, RegisterBudgetsAndSharedMemory) {
  EXPECT_EQ(registerBudget(8, 256), 32);
  EXPECT_EQ(registerBudget(7, 256), 32);
  EXPECT_EQ(registerBudget(6, 256), 40);
  EXPECT_EQ(registerBudget(5, 256), 48);
  EXPECT_EQ(registerBudget(4, 256), 64);
  EXPECT_EQ(registerBudget(2, 1024), 32);
  EXPECT_EQ(registerBudget(1, 256), 255);
  EXPECT_EQ(registerBudget(0, 256), 0);
  for (int blocks = 1; blocks <= 8; ++blocks)
    EXPECT_GE(residentBlocksByRegisters(registerBudget(blocks, 256), 256), blocks) << blocks;
  EXPECT_EQ(residentBlocksBySharedMemory(0, 256), 8);
  EXPECT_EQ(residentBlocksBySharedMemory(46 * 1024, 256), 4);
  EXPECT_EQ(residentBlocksBySharedMemory(100 * 1024, 1024), 2);
  EXPECT_EQ(residentBlocksBySharedMemory(100 * 1024, 1024, 100 * 1024), 0);  // a smaller SM's shared memory
}

}  // namespace
}  // namespace polyred
