package analysis

import (
	"testing"
	"time"

	"github.com/coopcc/coopcc/schema"
)

func TestStationBounds(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ev := func(dst string, lo uint32) BoundEvent { return BoundEvent{T: t0, Dst: dst, Lo: lo} }
	stations := []Station{{Name: "sta1", Addr: "10.0.0.1"}, {Name: "sta2", Addr: "10.0.0.2"}}
	own := Run{Info: RunInfo{Stations: stations}, Bounds: map[string][]BoundEvent{"sta1": {ev("10.0.1.1", 4)}}}
	if got := StationBounds(own, "sta1"); len(got) != 1 || got[0].Lo != 4 {
		t.Errorf("a station's own agent: %+v", got)
	}
	if got := StationBounds(own, "sta2"); got != nil {
		t.Errorf("a station without an agent: %+v", got)
	}
	srv := Run{Info: RunInfo{Stations: stations, ServerAgent: true}, Bounds: map[string][]BoundEvent{
		schema.ServerName: {ev("", 16), ev("10.0.0.2", 8), ev("10.0.0.1", 12)}}}
	got := StationBounds(srv, "sta1")
	if len(got) != 2 || got[0].Lo != 16 || got[1].Lo != 12 {
		t.Errorf("the server's agent, sta1: %+v; want its default and sta1's events", got)
	}
	srv.Info.ServerAgent = false
	if got := StationBounds(srv, "sta1"); got != nil {
		t.Errorf("server events in a run without a server agent: %+v", got)
	}
}
