package analysis

import (
	"math"
	"sort"
)

// NChange is one change in the number of terminals the schedule has
// sending (papers/004's hosts joining and leaving) and how long the agents
// took to act on it: an agent has followed the change once the N it logs
// with its bounds (BoundEvent.N) equals the new count.
type NChange struct {
	At       float64   // seconds after the traffic start
	From, To int       // scheduled senders with an agent, before and after
	Agents   int       // agents scheduled to send through the whole interval after the change
	Lags     []float64 // seconds from At until each agent that followed logged N = To, ascending
	Until    float64   // end of the interval the agents had to follow it in (the next change or the run's end)
}

// Followed is how many of the agents followed the change before the next one.
func (c NChange) Followed() int { return len(c.Lags) }

// MaxLag is the slowest agent's lag (NaN when none followed).
func (c NChange) MaxLag() float64 {
	if len(c.Lags) == 0 {
		return math.NaN()
	}
	return c.Lags[len(c.Lags)-1]
}

// FollowN lists every change in the number of scheduled senders that run
// agents (a station's start_s and stop_s) after the traffic started and
// before it ended, and for each one how long every agent scheduled to send
// through the interval after it took to log bounds with N equal to the new
// count. An agent whose last event at the change already says the new count
// has lag 0. The agents log their N only when a bound changes, so a lag is
// when the bounds followed N, which is what papers/004 asks ("how fast the
// bounds follow N"); an agent whose bounds do not depend on N (coop, whose
// shares come from the measured capacity) may log the new N late or never.
// Runs without agents' bound events (kernel modes) give nil.
func FollowN(r Run) []NChange {
	if len(r.Bounds) == 0 || r.T0 == 0 {
		return nil
	}
	times := scheduleTimes(r)
	var out []NChange
	for i, at := range times {
		until := r.Info.LengthS
		if i+1 < len(times) {
			until = times[i+1]
		}
		c := NChange{At: at, From: sendersAt(r, at-1e-9), To: sendersAt(r, at), Until: until}
		if c.From == c.To {
			continue
		}
		for _, st := range r.Info.Stations {
			if !st.Agent || !scheduledThrough(st, at, until, r.Info.LengthS) {
				continue
			}
			c.Agents++
			if lag, ok := followLag(r, r.Bounds[st.Name], at, until, c.To); ok {
				c.Lags = append(c.Lags, lag)
			}
		}
		sort.Float64s(c.Lags)
		out = append(out, c)
	}
	return out
}

// scheduleTimes are the distinct start and stop times of the stations that
// run agents, strictly inside the traffic window, ascending.
func scheduleTimes(r Run) []float64 {
	seen := map[float64]bool{}
	var ts []float64
	for _, st := range r.Info.Stations {
		if !st.Agent {
			continue
		}
		for _, t := range []float64{st.StartS, stopOf(st, r.Info.LengthS)} {
			if t > 0 && t < r.Info.LengthS && !seen[t] {
				seen[t] = true
				ts = append(ts, t)
			}
		}
	}
	sort.Float64s(ts)
	return ts
}

// stopOf is a station's scheduled stop (0 in the record: the run's end).
func stopOf(st Station, length float64) float64 {
	if st.StopS <= 0 {
		return length
	}
	return st.StopS
}

// sendersAt counts the stations with agents scheduled to send at t.
func sendersAt(r Run, t float64) int {
	n := 0
	for _, st := range r.Info.Stations {
		if st.Agent && st.StartS <= t && t < stopOf(st, r.Info.LengthS) {
			n++
		}
	}
	return n
}

// scheduledThrough says whether the station sends from at until until.
func scheduledThrough(st Station, at, until, length float64) bool {
	return st.StartS <= at && stopOf(st, length) >= until
}

// followLag is the time from at until the events first say n = to: 0 when
// the last event at or before at already does, the first later event before
// until that does, else not followed.
func followLag(r Run, evs []BoundEvent, at, until float64, to int) (float64, bool) {
	i := 0
	for i < len(evs) && r.RunTime(evs[i].T) <= at {
		i++
	}
	if i > 0 && evs[i-1].N == to {
		return 0, true
	}
	for ; i < len(evs); i++ {
		t := r.RunTime(evs[i].T)
		if t >= until {
			break
		}
		if evs[i].N == to {
			return t - at, true
		}
	}
	return 0, false
}
