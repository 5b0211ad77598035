"""Time words in questions: the window of world time a question names, if it names one.

``find_window("What did I cook on 19 March 2024?", anchor)`` is [2024-03-19, 2024-03-20) in
UTC, from the phrase "on 19 March 2024"; a phrase without its year ("in March") is placed
against the anchor (the question's as-of point, or now). Pure and fast: one regular
expression finds the candidate phrases, small functions resolve them. The conventions (days,
weeks, seasons, parts, relative words, ranges) are in docs/recall.md, "Time words".

Maintained parsers were measured and not used: dateparser and ctparse return points rather
than windows, miss weeks, seasons, parts and ranges, take "I may go" or "Sunday best" for
dates, and cost 0.2-20 ms a question.
"""

from graphmem.domain.timewords.windows import TimeWindow, find_window

__all__ = ["TimeWindow", "find_window"]
