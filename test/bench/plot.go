package main

import (
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotHistogram writes a PNG with the latency histograms (seconds) of the baseline and of the
// Pods synced through vc-syncer, on the same axes.
func plotHistogram(path string, base, synced []float64) error {
	p := plot.New()
	p.Title.Text = "Pod creation to Running latency"
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "Pods"
	for _, s := range []struct {
		name string
		v    []float64
		c    color.Color
	}{
		{"baseline: straight to super cluster", base, color.RGBA{R: 0x33, G: 0x66, B: 0xcc, A: 0x90}},
		{"through vc-syncer", synced, color.RGBA{R: 0xdd, G: 0x44, B: 0x22, A: 0x90}},
	} {
		h, err := plotter.NewHist(plotter.Values(s.v), 30)
		if err != nil {
			return err
		}
		h.FillColor = s.c
		h.LineStyle.Width = 0
		p.Add(h)
		p.Legend.Add(s.name, h)
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 4.5*vg.Inch, path)
}

// namedValues is one series of a plot: latencies in seconds.
type namedValues struct {
	name string
	v    []float64
}

// plotCDFs writes a PNG with the empirical cumulative distribution of each series (fraction of
// Pods with at most x seconds of latency), on a log-scale x axis so that sub-second and
// multi-second distributions are both readable.
func plotCDFs(path, title string, series []namedValues) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds (log scale)"
	p.Y.Label.Text = "fraction of Pods"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1.3 // room for the legend above the curves
	palette := []color.Color{
		color.RGBA{R: 0x33, G: 0x66, B: 0xcc, A: 0xff},
		color.RGBA{R: 0x22, G: 0x99, B: 0x44, A: 0xff},
		color.RGBA{R: 0xdd, G: 0x44, B: 0x22, A: 0xff},
		color.RGBA{R: 0x99, G: 0x44, B: 0xbb, A: 0xff},
		color.RGBA{R: 0xcc, G: 0x99, B: 0x11, A: 0xff},
	}
	for i, s := range series {
		v := append([]float64(nil), s.v...)
		slices.Sort(v)
		pts := make(plotter.XYs, 0, len(v))
		for j, x := range v {
			pts = append(pts, plotter.XY{X: max(x, 1e-3), Y: float64(j+1) / float64(len(v))}) // log axis: no 0
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(2)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}
