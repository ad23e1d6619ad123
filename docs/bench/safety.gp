# Draws safety.svg from safety-overlaps.dat safety-stale.dat safety-fence.dat: gnuplot safety.gp
set terminal svg size 960,990 dynamic font 'sans,11' background rgb 'white'
set output 'safety.svg'
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set key outside right top noenhanced
set xtics noenhanced rotate by -25
set multiplot layout 3,1
set yrange [0:28]
set title 'Overlapping critical sections (lower is better)'
plot for [i=2:6] 'safety-overlaps.dat' using i:xtic(1) title columnheader(i)
set yrange [0:20]
set title 'Stale writes: an unfenced resource takes them all (lower is better)'
plot for [i=2:6] 'safety-stale.dat' using i:xtic(1) title columnheader(i)
set yrange [0:20]
set title 'Stale writes a fenced resource let through (lower is better)'
plot for [i=2:6] 'safety-fence.dat' using i:xtic(1) title columnheader(i)
unset multiplot
