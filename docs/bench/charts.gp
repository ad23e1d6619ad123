# Draws the bench report's charts from its .dat files: gnuplot charts.gp
set terminal svg size 860,480 dynamic font 'sans,12' background rgb 'white'
set datafile missing '?'
set grid ytics
set key top left

set output 'latency.svg'
set title 'Uncontended acquire + release, one client (lower is better)'
set ylabel 'microseconds'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set xtics noenhanced rotate by -25
plot 'latency.dat' using 2:xtic(1) title 'p50', '' using 3 title 'p99'

set style data linespoints
set xlabel 'clients'
set ylabel 'acquisitions/s'
set xtics norotate
set logscale x 2
set logscale y 10
set yrange [*:*]
set key outside right noenhanced
set output 'contended.svg'
set title 'K clients on one lock (higher is better)'
plot for [i=2:14] 'contended.dat' using 1:i title columnheader(i) lw 2 pt 7
set output 'separate.svg'
set title 'K clients on K separate locks (higher is better)'
plot for [i=2:14] 'separate.dat' using 1:i title columnheader(i) lw 2 pt 7
