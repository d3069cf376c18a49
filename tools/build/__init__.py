"""What writes the collection's stored files: executed notebooks, navigation,
pins, the teacher's solutions, the site, the README's figure."""
