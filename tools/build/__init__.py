"""What writes the collection's stored files (notebooks, navigation, pins, solutions, site)."""
