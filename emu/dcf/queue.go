package dcf

// Queue is a node's transmit queue. PopBatch removes the frames of one
// transmission: the head frame and, when maxFrames > 1, the frames behind it
// that go to the same receiver (an A-MPDU), up to maxFrames/maxBytes (MPDU
// bytes as given by the mpdu function). Group-addressed frames are never
// aggregated.
type Queue interface {
	Push(f *Frame) bool // false: the queue is full and f was not taken
	Len() int
	Bytes() int // sum of MSDU bytes queued
	PopBatch(maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame
	// PopTo is PopBatch restricted to frames for receiver to at the head of
	// the queue (FIFO) or of its sub-queue (round robin).
	PopTo(to, maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame
	Purge(to int) []*Frame // remove every frame addressed to node `to`
}

// FIFO is a drop-tail queue holding at most Limit frames (0 = unlimited).
type FIFO struct {
	Limit int
	buf   []*Frame
	head  int
	bytes int
}

// NewFIFO returns a drop-tail FIFO of limit frames.
func NewFIFO(limit int) *FIFO { return &FIFO{Limit: limit} }

func (q *FIFO) Len() int   { return len(q.buf) - q.head }
func (q *FIFO) Bytes() int { return q.bytes }

func (q *FIFO) Push(f *Frame) bool {
	if q.Limit > 0 && q.Len() >= q.Limit {
		return false
	}
	if q.head > 0 && q.head >= len(q.buf)/2 { // compact
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf = q.buf[:n]
		q.head = 0
	}
	q.buf = append(q.buf, f)
	q.bytes += f.MSDU
	return true
}

// PopBatch takes the head frame and, for an aggregate, the following frames
// to the same receiver from anywhere in the queue, in order (as a driver's
// per-station queues would let it), up to the limits: the aggregate ends at
// the first frame to that receiver that does not fit, so that no smaller
// frame behind it jumps ahead (a driver builds an A-MPDU from the head of
// its per-station queue). Frames to other receivers keep their order.
func (q *FIFO) PopBatch(maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	if q.Len() == 0 {
		return nil
	}
	first := q.buf[q.head]
	out := []*Frame{first}
	q.pop()
	if first.To == Broadcast || maxFrames <= 1 {
		return out
	}
	bytes := mpdu(first)
	keep := q.head
	i := q.head
	for ; i < len(q.buf) && len(out) < maxFrames; i++ {
		f := q.buf[i]
		if f.To == first.To {
			if bytes+mpdu(f) > maxBytes {
				break // the aggregate is full: f and the rest stay in order
			}
			bytes += mpdu(f)
			q.bytes -= f.MSDU
			out = append(out, f)
			continue
		}
		q.buf[keep] = f
		keep++
	}
	if len(out) > 1 {
		n := copy(q.buf[keep:], q.buf[i:])
		clear(q.buf[keep+n:])
		q.buf = q.buf[:keep+n]
	}
	return out
}

func (q *FIFO) PopTo(to, maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	if q.Len() == 0 || q.buf[q.head].To != to || to == Broadcast || maxFrames < 1 || mpdu(q.buf[q.head]) > maxBytes {
		return nil
	}
	return q.PopBatch(maxFrames, maxBytes, mpdu)
}

func (q *FIFO) pop() {
	q.bytes -= q.buf[q.head].MSDU
	q.buf[q.head] = nil
	q.head++
}

func (q *FIFO) Purge(to int) []*Frame {
	var gone []*Frame
	keep := q.buf[:q.head]
	for _, f := range q.buf[q.head:] {
		if f.To == to {
			gone = append(gone, f)
			q.bytes -= f.MSDU
			continue
		}
		keep = append(keep, f)
	}
	clear(q.buf[len(keep):])
	q.buf = keep
	return gone
}

// RoundRobin keeps one FIFO per receiver and serves them in turn; Limit
// bounds the total number of frames (drop-tail on the arriving frame).
type RoundRobin struct {
	Limit int
	subs  map[int]*FIFO
	order []int
	next  int
	n     int
	bytes int
}

// NewRoundRobin returns a per-receiver round-robin queue of limit frames in total.
func NewRoundRobin(limit int) *RoundRobin { return &RoundRobin{Limit: limit, subs: map[int]*FIFO{}} }

func (q *RoundRobin) Len() int   { return q.n }
func (q *RoundRobin) Bytes() int { return q.bytes }

func (q *RoundRobin) Push(f *Frame) bool {
	if q.Limit > 0 && q.n >= q.Limit {
		return false
	}
	s, ok := q.subs[f.To]
	if !ok {
		s = NewFIFO(0)
		q.subs[f.To] = s
		q.order = append(q.order, f.To)
	}
	s.Push(f)
	q.n++
	q.bytes += f.MSDU
	return true
}

func (q *RoundRobin) PopBatch(maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	for range q.order {
		to := q.order[q.next%len(q.order)]
		q.next = (q.next + 1) % len(q.order)
		if s := q.subs[to]; s.Len() > 0 {
			out := s.PopBatch(maxFrames, maxBytes, mpdu)
			for _, f := range out {
				q.n--
				q.bytes -= f.MSDU
			}
			return out
		}
	}
	return nil
}

func (q *RoundRobin) PopTo(to, maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	s, ok := q.subs[to]
	if !ok {
		return nil
	}
	out := s.PopTo(to, maxFrames, maxBytes, mpdu)
	for _, f := range out {
		q.n--
		q.bytes -= f.MSDU
	}
	return out
}

func (q *RoundRobin) Purge(to int) []*Frame {
	s, ok := q.subs[to]
	if !ok {
		return nil
	}
	gone := s.Purge(to)
	for _, f := range gone {
		q.n--
		q.bytes -= f.MSDU
	}
	return gone
}

// Saturated is an endless source of MSDU-byte frames to node To, for
// saturation experiments (Bianchi validation, benchmarks).
type Saturated struct {
	MSDU, To int
}

func (q *Saturated) Push(*Frame) bool { return false }
func (q *Saturated) Len() int         { return 1 }
func (q *Saturated) Bytes() int       { return q.MSDU }
func (q *Saturated) PopBatch(maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	out := []*Frame{{MSDU: q.MSDU, To: q.To}}
	bytes := mpdu(out[0])
	for len(out) < maxFrames && bytes+mpdu(out[0]) <= maxBytes {
		bytes += mpdu(out[0])
		out = append(out, &Frame{MSDU: q.MSDU, To: q.To})
	}
	return out
}
func (q *Saturated) PopTo(to, maxFrames, maxBytes int, mpdu func(*Frame) int) []*Frame {
	if to != q.To || maxFrames < 1 || maxBytes < mpdu(&Frame{MSDU: q.MSDU}) {
		return nil
	}
	return q.PopBatch(maxFrames, maxBytes, mpdu)
}
func (q *Saturated) Purge(int) []*Frame { return nil }
