"""A package of layout plans, imported as ``from user_plans import plan_head``."""
