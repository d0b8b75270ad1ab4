package fairqueue

import "testing"

func TestReserveOf(t *testing.T) {
	for _, tc := range []struct{ workers, percent, want int }{
		{20, 10, 2}, {100, 10, 10}, {20, 0, 0}, {1, 50, 0}, {2, 10, 1}, {5, 100, 4}, {20, 1, 1},
	} {
		if got := ReserveOf(tc.workers, tc.percent); got != tc.want {
			t.Errorf("ReserveOf(%d, %d) = %d, want %d", tc.workers, tc.percent, got, tc.want)
		}
	}
}
