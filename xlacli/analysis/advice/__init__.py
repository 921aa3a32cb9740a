"""The advisors: compile cost by line, scan, buckets and value reads, each with its fix."""
