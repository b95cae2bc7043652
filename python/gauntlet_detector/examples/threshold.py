"""Alerts when an iteration takes `ratio` times the recent median; blames the slowest worker's GPU."""
import statistics
import sys

from gauntlet_detector import Detector, alert, run, telemetry


class IterationThreshold(Detector):
    def __init__(self, ratio=1.1, window=8):
        super().__init__()
        self.ratio, self.window, self.recent, self.alerted = ratio, window, [], False

    def on_batch(self, batch):
        alerts = []
        for it in telemetry.iterations(batch, expand=False):
            took = it.end_ns - it.start_ns
            if len(self.recent) == self.window and took > self.ratio * statistics.median(self.recent):
                if not self.alerted:
                    typical = statistics.median(r.compute_ns for r in it.workers.values())
                    worst = max(it.workers.values(), key=lambda r: r.compute_ns)
                    suspects = [(worst.worker, worst.compute_ns / typical - 1)] if worst.compute_ns > 1.05 * typical else []
                    alerts.append(alert("fail_slow", *suspects))
                    self.alerted = True
                continue
            self.alerted = False
            self.recent = (self.recent + [took])[-self.window:]
        return alerts


if __name__ == "__main__":
    sys.exit(run(IterationThreshold(*map(float, sys.argv[1:2]))))
