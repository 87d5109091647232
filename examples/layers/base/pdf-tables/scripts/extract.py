#!/usr/bin/env python3
"""Writes one CSV per table found in a PDF (a stand-in for the demo)."""
import sys

if __name__ == "__main__":
    print(f"would extract the tables of {sys.argv[1]}")
