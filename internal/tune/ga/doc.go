// Package ga is the genetic algorithm of seed 001 (Nurika et al., "GA
// assisted simultaneous multiple network cards optimization"): a genome
// picks one value per gene of a declared search space, and the search
// runs the paper's parameters by default — population 50, 100
// generations, mutation probability 0.2, single-point crossover with
// probability 0.9, tournament selection.
//
// What it decides: selection, crossover, mutation, elitism, and how noisy
// measurements become a fitness. Fitness is memoized per genome (a
// genome is measured once, not once per appearance), and because real
// throughput is noisy the elites of every generation are measured again
// (up to MaxSamples) and a genome's fitness is the median of its samples,
// so a lucky single measurement cannot keep a genome on top.
//
// What it leaves to others: all I/O. The caller supplies the fitness
// function (internal/bench/tunemeasure runs real transfers) and a Stop
// function for time budgets; the package reads no clock and no files, so
// it is tested on synthetic fitness functions with known optima.
package ga
