package main

import (
	"image/color"

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
