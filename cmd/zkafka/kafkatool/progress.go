package kafkatool

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"
)

// progressBar draws records/s and MB/s of long work on a terminal; nil
// (every method is nil-safe) when the writer is not one, so pipes and
// scripts never see it.
type progressBar struct {
	pw      progress.Writer
	tr      *progress.Tracker
	what    string
	start   time.Time
	records atomic.Int64
	bytes   atomic.Int64
	done    chan struct{}
	stopped chan struct{}
}

// startProgress starts a bar on w if w is a terminal; total is the number
// of records expected, 0 if unknown.
func startProgress(w io.Writer, what string, total int64) *progressBar {
	if !isTerminal(w) {
		return nil
	}
	pw := progress.NewWriter()
	pw.SetOutputWriter(w)
	pw.SetUpdateFrequency(200 * time.Millisecond)
	pw.SetAutoStop(false)
	pw.Style().Visibility.ETA = total > 0
	pw.Style().Visibility.Percentage = total > 0
	p := &progressBar{pw: pw, what: what, start: time.Now(), done: make(chan struct{}), stopped: make(chan struct{}),
		tr: &progress.Tracker{Message: what, Total: total, Units: progress.UnitsDefault}}
	pw.AppendTracker(p.tr)
	go pw.Render()
	go p.loop()
	return p
}

// add counts records and their bytes.
func (p *progressBar) add(records, bytes int64) {
	if p == nil {
		return
	}
	p.records.Add(records)
	p.bytes.Add(bytes)
}

func (p *progressBar) loop() {
	defer close(p.stopped)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			p.update()
			return
		case <-t.C:
			p.update()
		}
	}
}

func (p *progressBar) update() {
	secs := time.Since(p.start).Seconds()
	if secs <= 0 {
		return
	}
	n, b := p.records.Load(), p.bytes.Load()
	p.tr.SetValue(n)
	p.tr.UpdateMessage(fmt.Sprintf("%s  %.0f records/s  %.2f MB/s", p.what, float64(n)/secs, float64(b)/secs/1e6))
}

// stop draws the last state and ends the bar.
func (p *progressBar) stop() {
	if p == nil {
		return
	}
	close(p.done)
	<-p.stopped
	p.tr.MarkAsDone()
	time.Sleep(250 * time.Millisecond) // one more render of the final line
	p.pw.Stop()
}
