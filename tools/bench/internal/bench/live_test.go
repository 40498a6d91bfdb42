package bench

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func solidJPEG(t *testing.T, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 40))
	draw.Draw(img, img.Bounds(), &image.Uniform{c}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFlipLatencies(t *testing.T) {
	red := solidJPEG(t, color.RGBA{R: 255, A: 255})
	blue := solidJPEG(t, color.RGBA{B: 255, A: 255})
	grey := solidJPEG(t, color.RGBA{R: 128, G: 128, B: 128, A: 255})
	// An even second: red from start+2 s on, blue at +3 s, red at +4 s.
	start := time.Unix(1_700_000_000, 300e6)
	s2 := time.Unix(1_700_000_002, 0)
	at := func(d time.Duration) time.Time { return s2.Add(d) }
	tests := []struct {
		name    string
		frames  []liveFrame
		changes int
		want    []float64
		missed  int
	}{
		{
			name: "each flip's first frame of its colour, old colours skipped",
			frames: []liveFrame{
				{at: at(-500 * time.Millisecond), jpeg: blue},
				{at: at(40 * time.Millisecond), jpeg: blue}, // not yet
				{at: at(90 * time.Millisecond), jpeg: red},
				{at: at(150 * time.Millisecond), jpeg: red},
				{at: at(1120 * time.Millisecond), jpeg: blue},
				{at: at(2060 * time.Millisecond), jpeg: red},
			},
			changes: 3, want: []float64{90, 120, 60},
		},
		{
			name: "a flip no frame shows before the next is missed",
			frames: []liveFrame{
				{at: at(90 * time.Millisecond), jpeg: red},
				{at: at(1500 * time.Millisecond), jpeg: grey},
				{at: at(2010 * time.Millisecond), jpeg: blue}, // the wrong colour for +2 s
			},
			changes: 3, want: []float64{90}, missed: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.frames {
				tt.frames[i].start = start
			}
			got, missed, err := flipLatencies(tt.frames, tt.changes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("latencies (-want +got):\n%s", diff)
			}
			if missed != tt.missed {
				t.Errorf("missed = %d, want %d", missed, tt.missed)
			}
		})
	}
}

func TestSummarizeWatch(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	var frames []liveFrame
	// 6, 0, 4 frames of 100 bytes in the three seconds; one after the
	// window counts in the totals only.
	for _, d := range []int{0, 100, 200, 300, 400, 500, 2100, 2200, 2300, 2400, 3100} {
		frames = append(frames, liveFrame{at: start.Add(time.Duration(d) * time.Millisecond), size: 100, start: start})
	}
	got := summarizeWatch(frames, 3*time.Second, CPUUsage{})
	want := LiveWatch{Seconds: 3, Frames: 11, Bytes: 1100, FPS: 4, BytesPerSec: 400}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watch (-want +got):\n%s", diff)
	}
}
