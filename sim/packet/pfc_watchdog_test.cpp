#include "sim/packet/pfc_watchdog.hpp"

#include <gtest/gtest.h>

namespace gauntlet::sim::packet {
namespace {

constexpr Nanos kMs = kMillisecond;

PfcWatchdogParams sonic_defaults() {
  PfcWatchdogParams p;
  p.switch_enabled = true;
  p.detection_time = 200 * kMs;
  p.restoration_time = 200 * kMs;
  return p;
}

TEST(PfcWatchdog, AQueueNeverPausedIsNeverStormed) {
  const PfcWatchdogParams params = sonic_defaults();
  PfcWatchdog dog(params);
  EXPECT_EQ(dog.detection_due(-1), -1);
  EXPECT_FALSE(dog.check(10 * kSecond, -1, true));
  EXPECT_EQ(dog.state(), PfcWatchdog::State::operational);
  EXPECT_EQ(dog.detected(), 0u);
  EXPECT_EQ(dog.restoration_due(), -1);
}

TEST(PfcWatchdog, PausedWithoutABreakForTheDetectionTimeWhileHoldingFramesIsStormed) {
  const PfcWatchdogParams params = sonic_defaults();
  PfcWatchdog dog(params);
  dog.on_pause(5 * kMs);
  EXPECT_EQ(dog.detection_due(5 * kMs), 205 * kMs);
  EXPECT_FALSE(dog.check(205 * kMs - 1, 5 * kMs, true));
  EXPECT_TRUE(dog.check(205 * kMs, 5 * kMs, true));
  EXPECT_TRUE(dog.stormed());
  EXPECT_EQ(dog.detected(), 1u);
  // Stormed already: no second detection, nothing more to look for.
  EXPECT_FALSE(dog.check(300 * kMs, 5 * kMs, true));
  EXPECT_EQ(dog.detected(), 1u);
  EXPECT_EQ(dog.detection_due(5 * kMs), -1);
}

TEST(PfcWatchdog, AnEmptyQueueIsNotStuckUntilAFrameWaits) {
  const PfcWatchdogParams params = sonic_defaults();
  PfcWatchdog dog(params);
  EXPECT_FALSE(dog.check(500 * kMs, 0, false));
  EXPECT_FALSE(dog.stormed());
  EXPECT_TRUE(dog.check(600 * kMs, 0, true));
}

TEST(PfcWatchdog, ABreakInThePausesRestartsTheDetectionClock) {
  const PfcWatchdogParams params = sonic_defaults();
  PfcWatchdog dog(params);
  // Paused from 0, resumed, paused again from 150 ms: 300 ms after the
  // first pause is 150 ms into the second run.
  EXPECT_FALSE(dog.check(300 * kMs, 150 * kMs, true));
  EXPECT_EQ(dog.detection_due(150 * kMs), 350 * kMs);
  EXPECT_TRUE(dog.check(350 * kMs, 150 * kMs, true));
}

TEST(PfcWatchdog, RestoresOnceNoPauseCameForTheRestorationTimeThenWatchesAgain) {
  const PfcWatchdogParams params = sonic_defaults();
  PfcWatchdog dog(params);
  dog.on_pause(0);
  ASSERT_TRUE(dog.check(200 * kMs, 0, true));
  // Restoration counts from the last PAUSE, not from the detection; the
  // storm goes on, and each PAUSE moves it later.
  EXPECT_EQ(dog.restoration_due(), 200 * kMs);
  dog.on_pause(250 * kMs);
  dog.on_pause(300 * kMs);
  EXPECT_EQ(dog.restoration_due(), 500 * kMs);
  EXPECT_FALSE(dog.try_restore(450 * kMs));
  EXPECT_TRUE(dog.stormed());
  EXPECT_TRUE(dog.try_restore(500 * kMs));
  EXPECT_EQ(dog.state(), PfcWatchdog::State::operational);
  EXPECT_EQ(dog.restored(), 1u);
  EXPECT_FALSE(dog.try_restore(600 * kMs));  // restored once only
  // A second storm is detected and counted anew.
  dog.on_pause(900 * kMs);
  EXPECT_TRUE(dog.check(1100 * kMs, 900 * kMs, true));
  EXPECT_EQ(dog.detected(), 2u);
}

TEST(PfcWatchdog, TakesItsTimesFromItsParameters) {
  PfcWatchdogParams params = sonic_defaults();
  params.detection_time = 100 * kMs;  // Guo et al.'s NIC-side figure, here on a switch
  params.restoration_time = 50 * kMs;
  PfcWatchdog dog(params);
  EXPECT_FALSE(dog.check(99 * kMs, 0, true));
  EXPECT_TRUE(dog.check(100 * kMs, 0, true));
  dog.on_pause(120 * kMs);
  EXPECT_FALSE(dog.try_restore(169 * kMs));
  EXPECT_TRUE(dog.try_restore(170 * kMs));
}

}  // namespace
}  // namespace gauntlet::sim::packet
