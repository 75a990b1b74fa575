"""World-knowledge and paraphrase tables of the v2 recall set generator (see README.md, "v2").

Everything here is written for this project: small tables of common knowledge (a city's country, a
dish's cuisine, an instrument's family, a landmark's city, a job's field) and the phrasings the
generator draws from.  A question is asked with the *other* side of a table ("the country where she
studied" for a turn that names the city), so keywords alone cannot connect them.
"""

from __future__ import annotations

# city -> country
CITIES = {
    "Lyon": "France", "Porto": "Portugal", "Kraków": "Poland", "Valencia": "Spain", "Bologna": "Italy",
    "Leiden": "the Netherlands", "Ghent": "Belgium", "Graz": "Austria", "Uppsala": "Sweden", "Bergen": "Norway",
    "Aarhus": "Denmark", "Tampere": "Finland", "Cork": "Ireland", "Kyoto": "Japan", "Busan": "South Korea",
    "Chiang Mai": "Thailand", "Hanoi": "Vietnam", "Pune": "India", "Cusco": "Peru", "Medellín": "Colombia",
    "Mendoza": "Argentina", "Valparaíso": "Chile", "Oaxaca": "Mexico", "Melbourne": "Australia",
    "Wellington": "New Zealand", "Cape Town": "South Africa", "Marrakesh": "Morocco", "Nairobi": "Kenya",
    "Istanbul": "Turkey", "Tbilisi": "Georgia", "Brno": "the Czech Republic", "Ljubljana": "Slovenia",
    "Munich": "Germany", "Zurich": "Switzerland", "Reykjavik": "Iceland", "Thessaloniki": "Greece",
    "Debrecen": "Hungary", "Tartu": "Estonia", "Montreal": "Canada", "Recife": "Brazil",
}

# dish -> cuisine adjective
DISHES = {
    "pierogi": "Polish", "paella": "Spanish", "ramen": "Japanese", "pho": "Vietnamese", "bibimbap": "Korean",
    "moussaka": "Greek", "tagine": "Moroccan", "risotto": "Italian", "ceviche": "Peruvian", "pad thai": "Thai",
    "goulash": "Hungarian", "jollof rice": "West African", "dal makhani": "Indian", "pastéis de nata": "Portuguese",
    "schnitzel": "Austrian", "fondue": "Swiss", "borscht": "Ukrainian", "khachapuri": "Georgian",
    "enchiladas": "Mexican", "feijoada": "Brazilian", "poutine": "Canadian", "baklava": "Turkish",
    "smørrebrød": "Danish", "injera with lentil stew": "Ethiopian", "laksa": "Malaysian",
}

# instrument -> family
INSTRUMENTS = {
    "cello": "string", "violin": "string", "viola": "string", "double bass": "string", "harp": "string",
    "trumpet": "brass", "trombone": "brass", "French horn": "brass", "tuba": "brass",
    "clarinet": "woodwind", "oboe": "woodwind", "bassoon": "woodwind", "flute": "woodwind",
    "saxophone": "woodwind", "marimba": "percussion", "djembe": "percussion", "snare drum": "percussion",
}

# landmark -> city
LANDMARKS = {
    "the Alhambra": "Granada", "the Sagrada Família": "Barcelona", "Charles Bridge": "Prague",
    "the Acropolis": "Athens", "the Colosseum": "Rome", "the Little Mermaid statue": "Copenhagen",
    "Sacré-Cœur": "Paris", "the Brandenburg Gate": "Berlin", "the Rijksmuseum": "Amsterdam",
    "Edinburgh Castle": "Edinburgh", "the Hagia Sophia": "Istanbul", "the Atomium": "Brussels",
    "Schönbrunn Palace": "Vienna", "the Duomo and the Uffizi": "Florence", "the Belém Tower": "Lisbon",
    "the Fushimi Inari shrine": "Kyoto", "Table Mountain": "Cape Town", "the Golden Gate Bridge": "San Francisco",
    "the Space Needle": "Seattle", "the CN Tower": "Toronto",
}

# job -> (field, how a question names the field)
JOBS = {
    "paramedic": "healthcare", "dental hygienist": "healthcare", "midwife": "healthcare",
    "sous-chef": "hospitality", "hotel night manager": "hospitality", "sommelier": "hospitality",
    "structural engineer": "engineering", "electrician": "the trades", "plumber": "the trades",
    "primary school teacher": "education", "lecturer in chemistry": "education",
    "air traffic controller": "aviation", "flight attendant": "aviation",
    "tax adviser": "finance", "bank teller": "finance", "data analyst": "tech", "web developer": "tech",
    "court reporter": "law", "paralegal": "law", "park ranger": "conservation", "tree surgeon": "conservation",
}

# breed -> animal
PETS = {
    "dachshund": "dog", "beagle": "dog", "border collie": "dog", "greyhound": "dog", "corgi": "dog",
    "Maine Coon": "cat", "Siamese": "cat", "ragdoll": "cat", "Norwegian forest cat": "cat",
    "cockatiel": "bird", "budgie": "bird", "lop-eared rabbit": "rabbit", "bearded dragon": "lizard",
}
PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Otis", "Juniper", "Waffles", "Clementine", "Ziggy", "Basil", "Nugget",
             "Pickles", "Luna", "Tofu", "Marmalade", "Rocket", "Pumpkin", "Sprout", "Domino"]

RELATIVES = {  # relation -> (pronoun, possessive)
    "sister": ("she", "her"), "brother": ("he", "his"), "cousin": ("she", "her"), "aunt": ("she", "her"),
    "uncle": ("he", "his"), "neighbour": ("he", "his"), "flatmate": ("she", "her"), "colleague": ("he", "his"),
    "best friend": ("she", "her"), "dad": ("he", "his"), "mum": ("she", "her"), "grandmother": ("she", "her"),
}
THIRD_NAMES = ["Lena", "Tobias", "Marta", "Ravi", "Ines", "Kofi", "Hanna", "Diego", "Sanne", "Oskar", "Leila",
               "Emeka", "Nora", "Felix", "Amaya", "Bruno", "Keiko", "Stefan", "Zara", "Pavel", "Chloe", "Idris"]

SPEAKERS = [  # name, subject pronoun, possessive
    ("Aurelie", "she", "her"), ("Bram", "he", "his"), ("Carmen", "she", "her"), ("Dmitri", "he", "his"),
    ("Efua", "she", "her"), ("Finn", "he", "his"), ("Greta", "she", "her"), ("Hiroshi", "he", "his"),
    ("Isabel", "she", "her"), ("Joaquin", "he", "his"), ("Kalinda", "she", "her"), ("Lars", "he", "his"),
    ("Mariam", "she", "her"), ("Niko", "he", "his"), ("Odette", "she", "her"), ("Pedro", "he", "his"),
    ("Quinn", "they", "their"), ("Rosalind", "she", "her"), ("Sipho", "he", "his"), ("Tamsin", "she", "her"),
    ("Ulrich", "he", "his"), ("Valeria", "she", "her"), ("Wendell", "he", "his"), ("Ximena", "she", "her"),
    ("Yusuf", "he", "his"), ("Zofia", "she", "her"), ("Anselm", "he", "his"), ("Beatriz", "she", "her"),
]

# relative time phrase -> days before the session date (weekday-dependent ones are computed)
RELATIVE_DAYS = {"yesterday": 1, "two days ago": 2, "last week": 7, "a couple of weeks ago": 14,
                 "three weeks ago": 21, "last month": 30, "the other day": 3}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
