"""Labelled pairs for ``similar``: (a, b, same meaning?). Written for the tests, not tuned."""

from __future__ import annotations

PARAPHRASES: list[tuple[str, str]] = [
    (
        "The meeting has been moved to Friday afternoon.",
        "The meeting was rescheduled to Friday afternoon.",
    ),
    (
        "Your refund will arrive within five business days.",
        "You will get your refund within 5 business days.",
    ),
    ("Paris is the capital of France.", "The capital of France is Paris."),
    (
        "I could not find any notes about the security audit.",
        "No notes about the security audit were found.",
    ),
    (
        "The server is down for maintenance until 6 pm.",
        "Maintenance has taken the server offline until 6 pm.",
    ),
    (
        "Please reset your password using the link we emailed you.",
        "Use the link in our email to reset your password.",
    ),
    (
        "The package was delivered to your front door yesterday.",
        "Yesterday your package was left at your front door.",
    ),
    ("Water boils at 100 degrees Celsius at sea level.", "At sea level, water boils at 100 °C."),
    ("The store opens at nine in the morning.", "The shop opens at 9 am."),
    (
        "He finished the marathon in under four hours.",
        "He ran the marathon in less than four hours.",
    ),
    (
        "The flight to Tokyo was cancelled because of the storm.",
        "Because of the storm, the Tokyo flight was cancelled.",
    ),
    ("Our office is closed on public holidays.", "The office does not open on public holidays."),
    ("The invoice is overdue by two weeks.", "The invoice is two weeks past due."),
    (
        "You can cancel your subscription at any time.",
        "Your subscription can be cancelled whenever you like.",
    ),
    (
        "The report shows sales increased by ten percent.",
        "According to the report, sales rose 10%.",
    ),
    ("The cat is sleeping on the sofa.", "The cat is asleep on the couch."),
    ("This medication should be taken with food.", "Take this medicine with a meal."),
    ("The train to Berlin leaves from platform 4.", "The Berlin train departs from platform four."),
    (
        "The password must be at least twelve characters long.",
        "Passwords need a minimum of 12 characters.",
    ),
    (
        "The museum is free for children under twelve.",
        "Children under 12 get into the museum for free.",
    ),
    (
        "I will send you the contract tomorrow morning.",
        "Tomorrow morning I'll send you the contract.",
    ),
    ("The road is closed due to flooding.", "Flooding has closed the road."),
    ("The library has extended its opening hours.", "The library is now open for longer hours."),
    (
        "Your order has shipped and is on its way.",
        "Your order has been dispatched and is on the way.",
    ),
    (
        "The battery lasts about ten hours on a single charge.",
        "One charge gives roughly ten hours of battery life.",
    ),
]

UNRELATED: list[tuple[str, str]] = [
    (
        "The meeting has been moved to Friday afternoon.",
        "Water boils at 100 degrees Celsius at sea level.",
    ),
    ("Your refund will arrive within five business days.", "The cat is sleeping on the sofa."),
    ("Paris is the capital of France.", "The invoice is overdue by two weeks."),
    (
        "I could not find any notes about the security audit.",
        "The train to Berlin leaves from platform 4.",
    ),
    (
        "The server is down for maintenance until 6 pm.",
        "Children love building sandcastles at the beach.",
    ),
    (
        "Please reset your password using the link we emailed you.",
        "The orchestra played Beethoven's ninth symphony.",
    ),
    (
        "The package was delivered to your front door yesterday.",
        "Photosynthesis turns sunlight into chemical energy.",
    ),
    (
        "Water boils at 100 degrees Celsius at sea level.",
        "He finished the marathon in under four hours.",
    ),
    (
        "The store opens at nine in the morning.",
        "Volcanic eruptions can change the global climate.",
    ),
    (
        "He finished the marathon in under four hours.",
        "The contract must be signed by both parties.",
    ),
    (
        "The flight to Tokyo was cancelled because of the storm.",
        "My grandmother bakes bread every Sunday.",
    ),
    ("Our office is closed on public holidays.", "The python script parses JSON files."),
    ("The invoice is overdue by two weeks.", "Elephants are the largest land animals."),
    (
        "You can cancel your subscription at any time.",
        "The river froze during the coldest winter in decades.",
    ),
    ("The report shows sales increased by ten percent.", "She painted the fence bright yellow."),
    ("The cat is sleeping on the sofa.", "Interest rates were raised by the central bank."),
    ("This medication should be taken with food.", "The football match ended in a draw."),
    ("The train to Berlin leaves from platform 4.", "The recipe calls for two cups of flour."),
    (
        "The password must be at least twelve characters long.",
        "The mountain trail offers views of the lake.",
    ),
    ("The museum is free for children under twelve.", "The database query returned no rows."),
    ("I will send you the contract tomorrow morning.", "Bees pollinate many of the crops we eat."),
    ("The road is closed due to flooding.", "The new phone has a larger screen."),
    ("The library has extended its opening hours.", "The chess champion lost in the final round."),
    ("Your order has shipped and is on its way.", "Jupiter has dozens of moons."),
    (
        "The battery lasts about ten hours on a single charge.",
        "The poem describes autumn leaves falling.",
    ),
]
