"""The command line: each command (run, graph, explain, check, test, repl) a thin layer that
reads the program, runs it through the interpreter with the observers its view needs, and
renders what they saw (reports, graphs, explanations) in the chosen language."""
